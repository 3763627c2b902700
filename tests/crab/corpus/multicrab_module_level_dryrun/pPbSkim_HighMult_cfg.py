import FWCore.ParameterSet.Config as cms

process = cms.Process('SKIM')
process.source = cms.Source('PoolSource', fileNames = cms.untracked.vstring())
process.highMultFilter = cms.EDFilter('HLTHighLevel', HLTPaths = cms.vstring('HLT_PAFullTracks_Multiplicity185_*'),
                                      throw = cms.bool(False))
process.skimPath = cms.Path(process.highMultFilter)
process.output = cms.OutputModule('PoolOutputModule', fileName = cms.untracked.string('pPb_HighMult_skim.root'),
                                  SelectEvents = cms.untracked.PSet(SelectEvents = cms.vstring('skimPath')))
process.outpath = cms.EndPath(process.output)
